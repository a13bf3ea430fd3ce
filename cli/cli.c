/* cli.c: option lookup, the error/usage exits shared by the subcommands, and the signals that
 * end a command (which take its unfinished output files with them). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"

bool cli_init(struct cli *c, int argc, char **argv, const char *cmd) {
    c->argc = argc;
    c->argv = argv;
    c->cmd = cmd;
    c->bad = false;
    c->used = calloc((size_t)argc + 1, sizeof *c->used);
    return c->used != NULL;
}

void cli_done(struct cli *c) {
    free(c->used);
    c->used = NULL;
}

enum { USED_NO, USED_OPTION, USED_POSITIONAL };

static bool is_option(const char *a) { return a[0] == '-' && a[1] != '\0'; }

const char *cli_value(struct cli *c, const char *name) {
    const char *val = NULL;
    size_t n = strlen(name);
    for (int i = 0; i < c->argc; i++) {
        if (c->used[i]) continue;
        const char *a = c->argv[i];
        if (!strncmp(a, name, n) && a[n] == '=') {
            c->used[i] = USED_OPTION;
            val = a + n + 1;
        } else if (!strcmp(a, name)) {
            c->used[i] = USED_OPTION;
            if (i + 1 < c->argc) {
                c->used[i + 1] = USED_OPTION;
                val = c->argv[++i];
            } else {
                fprintf(stderr, "driple: %s: option %s needs a value\n", c->cmd, name);
                c->bad = true;
            }
        }
    }
    return val;
}

bool cli_flag(struct cli *c, const char *name) {
    bool found = false;
    for (int i = 0; i < c->argc; i++)
        if (!c->used[i] && !strcmp(c->argv[i], name)) {
            c->used[i] = USED_OPTION;
            found = true;
        }
    return found;
}

bool cli_int(struct cli *c, const char *name, int64_t lo, int64_t hi, int64_t *out) {
    const char *v = cli_value(c, name);
    if (!v) return !c->bad;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "driple: %s: %s '%s': expected an integer in [%lld, %lld]\n", c->cmd, name,
                v, (long long)lo, (long long)hi);
        c->bad = true;
        return false;
    }
    *out = x;
    return true;
}

bool cli_double(struct cli *c, const char *name, double lo, double hi, double *out) {
    const char *v = cli_value(c, name);
    if (!v) return !c->bad;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x) || x < lo || x > hi) {
        fprintf(stderr, "driple: %s: %s '%s': expected a number in [%g, %g]\n", c->cmd, name, v,
                lo, hi);
        c->bad = true;
        return false;
    }
    *out = x;
    return true;
}

const char *cli_positional(struct cli *c, int i) {
    for (int k = 0; k < c->argc; k++) {
        if (c->used[k] == USED_OPTION || is_option(c->argv[k])) continue;
        if (i-- == 0) {
            c->used[k] = USED_POSITIONAL;
            return c->argv[k];
        }
    }
    return NULL;
}

bool cli_check_unused(struct cli *c) {
    for (int i = 0; i < c->argc; i++) {
        if (c->used[i]) continue;
        fprintf(stderr, "driple: %s: unexpected argument '%s' (see 'driple help')\n", c->cmd,
                c->argv[i]);
        c->bad = true;
        return false;
    }
    return !c->bad;
}

int cli_fail(const struct dp_error *err) {
    fprintf(stderr, "driple: %s\n", err->msg[0] ? err->msg : dp_status_str(err->status));
    return 1;
}

int cli_usage(const char *cmd, const char *usage, const char *fmt, ...) {
    fprintf(stderr, "driple: %s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s\n", usage);
    return 2;
}

/* Every signal whose default action ends the process and that a handler may catch (SIGKILL and
 * SIGSTOP cannot be; the crash signals are left to die as they do). */
static const int ending_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGPIPE,   SIGALRM,
                                     SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};

static void (*volatile g_also)(void);

void cli_signals_also(void (*fn)(void)) { g_also = fn; }

void cli_die_of_signal(int sig) {
    dp_out_remove_pending(); /* async-signal-safe, as g_also must be */
    void (*also)(void) = g_also;
    if (also) also();
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when this handler returns: the process ends by sig, as it would */
}

static atomic_int g_cancel; /* lock-free, so a signal handler may set it */
static void (*g_cancel_old)(int);

static void on_cancel(int sig) {
    (void)sig;
    g_cancel = 1;
    signal(SIGINT, cli_die_of_signal); /* a second Ctrl-C ends the process */
}

atomic_int *cli_cancel_watch(void) {
    g_cancel = 0;
    g_cancel_old = signal(SIGINT, on_cancel);
    return &g_cancel;
}

void cli_cancel_unwatch(void) { signal(SIGINT, g_cancel_old); }

bool cli_cancelled(void) { return g_cancel != 0; }

void cli_signals_install(void) {
    for (size_t i = 0; i < sizeof ending_signals / sizeof ending_signals[0]; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started us (nohup, a shell's trap '' PIPE) stays ignored */
        if (sigaction(ending_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = cli_die_of_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(ending_signals[i], &sa, NULL);
    }
}
