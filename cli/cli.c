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

enum { USED_NO, USED_OPTION, USED_POSITIONAL };

static bool is_option(const char *a) { return a[0] == '-' && a[1] != '\0'; }

static void expand(const struct cli_opt *t, const struct cli_opt **rows, int max, int *n,
                   int depth) {
    if (depth > 4) {
        fprintf(stderr, "driple: internal error: option fragments nested too deep\n");
        exit(2);
    }
    for (; t->name || t->more; t++) {
        if (t->more) {
            expand(t->more, rows, max, n, depth + 1);
            continue;
        }
        if (*n >= max) {
            fprintf(stderr, "driple: internal error: more than %d options in one table\n", max);
            exit(2);
        }
        rows[(*n)++] = t;
    }
}

int cli_rows(const struct cli_spec *spec, const struct cli_opt **rows, int max) {
    int n = 0;
    expand(spec->opts, rows, max, &n, 0);
    return n;
}

/* The row whose name is the argument a ("--batch", or "--batch=32" when eq_ok). */
static int row_of(const struct cli_opt *const *rows, int n, const char *a, bool eq_ok) {
    for (int r = 0; r < n; r++) {
        size_t k = strlen(rows[r]->name);
        if (!strncmp(a, rows[r]->name, k) && (!a[k] || (eq_ok && a[k] == '=' && rows[r]->arg)))
            return r;
    }
    return -1;
}

static bool is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* The edit distance between a and b (their first 63 characters), for "did you mean". */
static int distance(const char *a, const char *b) {
    int la = (int)strnlen(a, 63), lb = (int)strnlen(b, 63), d[64];
    for (int j = 0; j <= lb; j++) d[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = d[0];
        d[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = d[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (d[j - 1] + 1 < best) best = d[j - 1] + 1;
            d[j] = best;
            diag = up;
        }
    }
    return d[lb];
}

/* "unknown option '--bach' (did you mean --batch?; see driple CMD --help)": the table's names
 * within a third of the name's length in edits, or that start with it. */
static void unknown_option(const struct cli *c, const char *a) {
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
    fprintf(stderr, "driple: %s: unknown option '%s'", c->cmd, name);
    int shown = 0, lim = (int)strlen(name) / 3 + 1;
    for (int r = 0; r < c->n_rows && shown < 4; r++) {
        const char *o = c->rows[r]->name;
        if (distance(name, o) > lim && strncmp(o, name, strlen(name))) continue;
        fprintf(stderr, "%s%s", shown++ ? ", " : " (did you mean ", o);
    }
    fprintf(stderr, "%ssee 'driple %s --help')\n", shown ? "?; " : " (", c->cmd);
}

bool cli_init(struct cli *c, int argc, char **argv, const struct cli_spec *spec) {
    memset(c, 0, sizeof *c);
    c->argc = argc;
    c->argv = argv;
    c->cmd = spec->cmd;
    c->spec = spec;
    c->n_rows = cli_rows(spec, c->rows, CLI_MAX_ROWS);
    for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
        if (is_help(argv[i])) { /* wherever it is: `train --sweep --help` too */
            cli_help(spec, stdout);
            return false; /* c->rc 0 */
        }
    for (int i = 0; i < argc && strcmp(argv[i], "--"); i++) {
        int r = row_of(c->rows, c->n_rows, argv[i], true);
        if (r >= 0) {
            i += c->rows[r]->arg && !strchr(argv[i], '='); /* its value, whatever it looks like */
            continue;
        }
        if (is_option(argv[i])) {
            unknown_option(c, argv[i]);
            c->rc = 2;
            return false;
        }
    }
    c->used = calloc((size_t)argc + 1, sizeof *c->used);
    c->rc = 1;
    return c->used != NULL;
}

void cli_done(struct cli *c) {
    free(c->used);
    c->used = NULL;
}

/* The row of option name, which the command reads as a flag (!value) or with a value; a name
 * the table lacks, or has as the other kind, is the command's bug. */
static const struct cli_opt *asked(struct cli *c, const char *name, bool value) {
    for (int r = 0; r < c->n_rows; r++)
        if (!strcmp(c->rows[r]->name, name) && !c->rows[r]->arg == !value) {
            c->asked[r] = true;
            return c->rows[r];
        }
    fprintf(stderr, "driple: internal error: %s: option %s is not in the table%s\n", c->cmd, name,
            value ? " (as an option with a value)" : " (as a flag)");
    exit(2);
}

static void check_range(struct cli *c, const struct cli_opt *o, double lo, double hi) {
    if (o->lo == lo && o->hi == hi) return;
    fprintf(stderr, "driple: internal error: %s: option %s is not in the table with the range "
            "[%g, %g] (the table says [%g, %g])\n", c->cmd, o->name, lo, hi, o->lo, o->hi);
    exit(2);
}

const char *cli_value(struct cli *c, const char *name) {
    asked(c, name, true);
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
    asked(c, name, false);
    bool found = false;
    for (int i = 0; i < c->argc; i++)
        if (!c->used[i] && !strcmp(c->argv[i], name)) {
            c->used[i] = USED_OPTION;
            found = true;
        }
    return found;
}

bool cli_int(struct cli *c, const char *name, int64_t lo, int64_t hi, int64_t *out) {
    check_range(c, asked(c, name, true), (double)lo, (double)hi);
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
    check_range(c, asked(c, name, true), lo, hi);
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

/* A range bound as the help shows it: an integer in full, the 64-bit ends by name. */
static void print_bound(FILE *f, double x) {
    if (x >= 9.2e18) fputs("2^63-1", f);
    else if (x <= -9.2e18) fputs("-2^63", f);
    else if (x == floor(x) && fabs(x) < 1e15) fprintf(f, "%.0f", x);
    else fprintf(f, "%g", x);
}

void cli_help(const struct cli_spec *spec, FILE *f) {
    const struct cli_opt *rows[CLI_MAX_ROWS];
    int n = cli_rows(spec, rows, CLI_MAX_ROWS);
    fprintf(f, "driple %s: %s\n\nusage: %s\n\noptions:\n", spec->cmd, spec->summary, spec->usage);
    for (int r = 0; r < n; r++) {
        const struct cli_opt *o = rows[r];
        char head[96];
        snprintf(head, sizeof head, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %-26s %s", head, o->help);
        if (o->def || o->lo < o->hi) fputs(" (", f);
        if (o->def) fprintf(f, "default %s", o->def);
        if (o->lo < o->hi) {
            fputs(o->def ? "; " : "", f);
            print_bound(f, o->lo);
            fputs(" .. ", f);
            print_bound(f, o->hi);
        }
        fputs(o->def || o->lo < o->hi ? ")\n" : "\n", f);
    }
    fprintf(f, "  %-26s %s\n", "-h, --help", "this help");
    if (spec->extra) {
        fputc('\n', f);
        spec->extra(f);
    }
    fprintf(f, "\nexit status: 0 ok, 1 a runtime failure (bad input, a failed run), 2 a usage "
               "error\n");
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
    if (getenv("DRIPLE_CHECK_OPTS")) /* a table row the command never reads: the test's check */
        for (int r = 0; r < c->n_rows; r++)
            if (!c->asked[r]) {
                fprintf(stderr, "driple: internal error: %s: option %s is in the table but never "
                        "read\n", c->cmd, c->rows[r]->name);
                c->bad = true;
            }
    for (int i = 0; i < c->argc; i++) {
        if (c->used[i]) continue;
        fprintf(stderr, "driple: %s: unexpected argument '%s' (see 'driple %s --help')\n", c->cmd,
                c->argv[i], c->cmd);
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
