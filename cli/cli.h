/* cli.h: the command-line plumbing shared by every `driple` subcommand: option lookup (options
 * first, then positionals), typed values with range checks, and the error/usage exit paths.
 * Exit codes: 0 success, 1 an error in the input or the run, 2 a usage error. */
#ifndef DRIPLE_CLI_H
#define DRIPLE_CLI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/status.h"

struct cli {
    int          argc;
    char       **argv;
    unsigned char *used; /* per argument: consumed by an option or taken as a positional */
    const char  *cmd;   /* "graph info", for messages */
    bool         bad;   /* a value failed to parse: the command should return 2 */
};

/* Wraps argv (after the subcommand words); used[] is allocated (cli_done frees). */
bool cli_init(struct cli *c, int argc, char **argv, const char *cmd);
void cli_done(struct cli *c);
/* The value after option `name` ("--batch 32" or "--batch=32"), or NULL when absent. A repeated
 * option yields its last value. Query every option before any positional. */
const char *cli_value(struct cli *c, const char *name);
/* True when the flag is present. */
bool cli_flag(struct cli *c, const char *name);
/* Integer option in [lo, hi]; *out keeps its default when absent; false (and c->bad, message
 * printed) when malformed or out of range. */
bool cli_int(struct cli *c, const char *name, int64_t lo, int64_t hi, int64_t *out);
bool cli_double(struct cli *c, const char *name, double lo, double hi, double *out);
/* The i-th argument not consumed by an option, or NULL. */
const char *cli_positional(struct cli *c, int i);
/* Fails (message, false) when any argument was not consumed, naming it. */
bool cli_check_unused(struct cli *c);

/* Prints "driple: <msg>" for err to stderr; returns 1. */
int cli_fail(const struct dp_error *err);
/* Prints "driple: <cmd>: <what>" plus "usage: <usage>" to stderr; returns 2. */
int cli_usage(const char *cmd, const char *usage, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Makes every catchable signal that ends the process (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGPIPE, SIGALRM, SIGUSR1/2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF; not those ignored at start)
 * run cli_die_of_signal. main() calls it first. */
void cli_signals_install(void);
/* The handler: removes the temporary files of writes in progress (dp_out_remove_pending), then
 * ends the process by sig. A command that catches a signal for a while hands it back to this. */
void cli_die_of_signal(int sig);
/* Makes cli_die_of_signal also run fn (async-signal-safe; NULL: nothing), as the explorer's
 * terminal restore. */
void cli_signals_also(void (*fn)(void));
/* Ctrl-C as "stop and keep what is done" for a long engine call: from cli_cancel_watch until
 * cli_cancel_unwatch, a first SIGINT sets the flag it returns (the engine call's `cancel`), a
 * second ends the process (cli_die_of_signal). The flag starts at 0; cli_cancelled reads it (also
 * after the unwatch). One watch at a time. */
atomic_int *cli_cancel_watch(void);
void        cli_cancel_unwatch(void);
bool        cli_cancelled(void);

#endif
