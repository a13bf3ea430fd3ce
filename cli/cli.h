/* cli.h: the command-line plumbing shared by every `driple` subcommand: option lookup (options
 * first, then positionals), typed values with range checks, and the error/usage exit paths.
 * Exit codes: 0 success, 1 an error in the input or the run, 2 a usage error. */
#ifndef DRIPLE_CLI_H
#define DRIPLE_CLI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dp/status.h"

/* One option of a command. Each command declares its options in one table (a static array at
 * the top of its file, ended by CLI_END) and passes it to cli_init: the parser accepts only the
 * options of the table, and --help, the man page and the bash completion are printed from it, so
 * an option cannot exist without its help. A row may instead bring in a shared fragment
 * (CLI_MORE(rows): the cluster options, say), so that options several commands take are
 * declared once. */
struct cli_opt {
    const char *name; /* "--batch", "-o"; NULL in a fragment's row and in the end row */
    const char *arg;  /* the value's name ("N", "FILE"; choices as "ps|allreduce"), NULL: a flag */
    const char *def;  /* the default as the help shows it, NULL: none (absent is unset) */
    double      lo, hi;               /* cli_int/cli_double's range (lo < hi), else both 0 */
    const char *help;                 /* one phrase, what the option does */
    const struct cli_opt *more;       /* a fragment's rows (name NULL), else NULL */
};
#define CLI_MORE(rows) {NULL, NULL, NULL, 0, 0, NULL, (rows)}
#define CLI_END        {NULL, NULL, NULL, 0, 0, NULL, NULL}
/* A numeric macro's value as the default text ("100" for DP_DEFAULT_GROUPS). */
#define CLI_STR_(x) #x
#define CLI_STR(x)  CLI_STR_(x)

/* A command (or sub-command) as --help, `driple help`, the man page and the completion show it. */
struct cli_spec {
    const char           *cmd;     /* "graph info", for messages and help */
    const char           *summary; /* one line: what it does */
    const char           *usage;   /* the synopsis and notes (what cli_usage prints too) */
    const struct cli_opt *opts;    /* its option table */
    void (*extra)(FILE *f);        /* prints more help after the options (NULL: none) */
};

/* The options' rows of a table, fragments expanded, at most CLI_MAX_ROWS. */
#define CLI_MAX_ROWS 128

struct cli {
    int          argc;
    char       **argv;
    unsigned char *used; /* per argument: consumed by an option or taken as a positional */
    const char  *cmd;   /* "graph info", for messages */
    bool         bad;   /* a value failed to parse: the command should return 2 */
    int          rc;    /* when cli_init returns false: the exit status (0 after --help) */
    const struct cli_spec *spec;
    const struct cli_opt  *rows[CLI_MAX_ROWS]; /* spec's table, fragments expanded */
    bool                   asked[CLI_MAX_ROWS]; /* the command has read the row's option */
    int                    n_rows;
};

/* Wraps argv (after the subcommand words) for the command of spec; used[] is allocated
 * (cli_done frees). False, with c->rc the exit status and nothing to free, when the command
 * should end at once: after printing its help for -h or --help (rc 0; arguments after a "--"
 * are not looked at), for an option not in its table (rc 2, the message naming the nearest
 * options of the table), or out of memory (rc 1). */
bool cli_init(struct cli *c, int argc, char **argv, const struct cli_spec *spec);
void cli_done(struct cli *c);
/* Expands spec's table into rows (at most max); returns how many (a table with more rows, or a
 * fragment nested more than 4 deep, is a programming error: the process ends with status 2). */
int cli_rows(const struct cli_spec *spec, const struct cli_opt **rows, int max);
/* Prints spec's help to f: "usage: " and its usage text, the options of its table (each with its
 * value, default and range), -h/--help, and the exit statuses. */
void cli_help(const struct cli_spec *spec, FILE *f);
/* The value after option `name` ("--batch 32" or "--batch=32"), or NULL when absent. A repeated
 * option yields its last value. Query every option before any positional. An option `name` that
 * is not in the table (or is a flag there; for cli_flag: one that takes a value there; for
 * cli_int/cli_double: whose range there is not [lo, hi]) is a programming error: "driple:
 * internal error: <cmd>: option <name> is not in the table", and the process ends with status
 * 2. */
const char *cli_value(struct cli *c, const char *name);
/* True when the flag is present. */
bool cli_flag(struct cli *c, const char *name);
/* Integer option in [lo, hi]; *out keeps its default when absent; false (and c->bad, message
 * printed) when malformed or out of range. */
bool cli_int(struct cli *c, const char *name, int64_t lo, int64_t hi, int64_t *out);
bool cli_double(struct cli *c, const char *name, double lo, double hi, double *out);
/* The i-th argument not consumed by an option, or NULL. */
const char *cli_positional(struct cli *c, int i);
/* Fails (message, false) when any argument was not consumed, naming it. With DRIPLE_CHECK_OPTS
 * set in the environment, also says "internal error" (false) for each row of the table that the
 * command has not read by then (the options are read before the positionals, so by the time
 * of this check a command has read all of its own). */
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
