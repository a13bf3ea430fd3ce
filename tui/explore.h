/* explore.h: the explorer's one entry point, for the command line (cli/cmd_explore.c): load the
 * graph and settings, then run the ncurses loop, or time key actions for the benchmarks. */
#ifndef DRIPLE_EXPLORE_H
#define DRIPLE_EXPLORE_H

#include <stdbool.h>

#include "app.h"
#include "layout.h" /* LAYOUT_MIN_ROWS, LAYOUT_MIN_COLS */

struct tui_opts {
    struct app_opts app;       /* what to open (app_init) */
    bool            no_color;  /* --no-color (NO_COLOR is read as well) */
    long            bench_keys; /* > 0: time this many key actions into /dev/null, no terminal */
    const char     *bench_seq; /* the keys to cycle through (NULL: a fixed mix) */
    int             rows, cols; /* the benchmark's terminal size */
    bool            json;      /* benchmark figures as JSON */
};

/* Opens the explorer (or runs the key benchmark) and returns the exit status: 0, 1 after
 * printing "driple: <file>:<where>: <what>" to stderr (a file that does not load, no terminal),
 * or 128 + the signal that ended it. */
int tui_explore(const struct tui_opts *o);

/* Gives the terminal back (alternate screen left, cursor shown, attributes, keypad and mouse
 * reporting reset, the tty modes from before the explorer) when the explorer has it; else does
 * nothing. Async-signal-safe: for the handler of a signal that ends the process. */
void tui_restore_terminal(void);

#endif
