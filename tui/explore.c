/* explore.c: the ncurses explorer's main loop (htop's shape): a getch
 * with a timeout, KEY_RESIZE -> layout + new windows, key -> action -> reaction flags, one
 * doupdate per frame, and endwin on every exit path (normal, error, signal). `--bench-keys N`
 * times N key actions with full redraws into a terminal written to /dev/null, after the
 * importance tab's first open (its Graphviz layout runs in the background) and its `r` key
 * (occlusion, computed in the background). */
#include <curses.h>
#include <langinfo.h>
#include <math.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "explore.h"

#include "dp/clock.h"
#include "dp/files.h"
#include "dp/json_out.h"
#include "keys.h"
#include "layout.h"
#include "tabs.h"
#include "views/view_common.h"
#include "imp.h"
#include "views/view_importance.h"
#include "wins.h"

#define FILL_BUDGET_MS 25 /* simulations run per idle frame while some are pending */

static volatile sig_atomic_t g_quit_sig;
static volatile sig_atomic_t g_curses_on;

/* What a signal handler needs to give the terminal back without curses (endwin is not
 * async-signal-safe): the tty modes from before curses, and the terminfo strings that leave
 * the alternate screen, show the cursor, reset attributes, keypad and mouse reporting, made
 * once at start. */
static struct termios g_tty_saved;
static volatile sig_atomic_t g_tty_saved_ok;
static int  g_tty_in = -1, g_tty_out = -1;
static char g_reset[512];
static size_t g_reset_len;

static void reset_add(const char *cap) {
    const char *v = tigetstr(cap);
    if (!v || v == (char *)-1) return;
    size_t n = strlen(v);
    if (g_reset_len + n < sizeof g_reset) {
        memcpy(g_reset + g_reset_len, v, n);
        g_reset_len += n;
    }
}

/* After newterm: the reset sequence for this terminal. CAN first ends any escape sequence the
 * interrupted frame left half written. */
static void reset_prepare(void) {
    g_reset_len = 0;
    g_reset[g_reset_len++] = '\030';
    reset_add("sgr0");
    reset_add("cnorm");
    reset_add("rmkx");
    const char *km = tigetstr("kmous");
    if (km && km != (char *)-1) { /* xterm mouse modes, as ncurses turns them on */
        static const char off[] = "\033[?1006l\033[?1003l\033[?1002l\033[?1000l";
        if (g_reset_len + sizeof off - 1 < sizeof g_reset) {
            memcpy(g_reset + g_reset_len, off, sizeof off - 1);
            g_reset_len += sizeof off - 1;
        }
    }
    reset_add("rmcup");
}

void tui_restore_terminal(void) {
    if (!g_curses_on) return;
    if (g_tty_out >= 0 && g_reset_len) {
        ssize_t w = write(g_tty_out, g_reset, g_reset_len);
        (void)w;
    }
    if (g_tty_saved_ok && g_tty_in >= 0) tcsetattr(g_tty_in, TCSAFLUSH, &g_tty_saved);
}

static void on_quit_signal(int sig) { g_quit_sig = sig; }

/* A crash must not leave the terminal raw or an output half written: restore, remove, then die
 * of the same signal. */
static void on_fatal_signal(int sig) {
    tui_restore_terminal();
    dp_out_remove_pending();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void curses_atexit(void) {
    if (g_curses_on) endwin();
    g_curses_on = 0;
}

/* SIGINT, SIGTERM and SIGHUP quit through the loop (endwin, status 128 + the signal); a crash
 * restores the terminal from the handler. Every other signal that ends a process is the front
 * end's (cli_die_of_signal), which calls tui_restore_terminal. */
static void install_signals(void) {
    static const int quit[] = {SIGINT, SIGTERM, SIGHUP};
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL, SIGTRAP, SIGSYS};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_quit_signal; /* no SA_RESTART: getch returns and the loop sees the flag */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof quit / sizeof quit[0]; i++) sigaction(quit[i], &sa, NULL);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND;
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaction(fatal[i], &sa, NULL);
    atexit(curses_atexit);
}

static void wins_free(struct wins *w) {
    WINDOW **all[] = {&w->header, &w->tabs,   &w->table,  &w->derived, &w->strips,
                      &w->body,   &w->status, &w->footer, &w->help};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (*all[i]) delwin(*all[i]);
        *all[i] = NULL;
    }
}

static WINDOW *win(struct rect r) {
    if (r.h <= 0 || r.w <= 0) return NULL;
    return newwin(r.h, r.w, r.y, r.x);
}

static void wins_make(struct wins *w, const struct layout *l) {
    wins_free(w);
    if (l->too_small) return;
    w->header = win(l->header);
    w->tabs = win(l->tabs);
    w->table = win(l->table);
    w->derived = win(l->derived);
    w->strips = win(l->strips);
    w->body = win(l->body);
    w->status = win(l->status);
    w->footer = win(l->footer);
    w->help = win(l->help);
    WINDOW *all[] = {w->header, w->tabs, w->table, w->derived, w->strips,
                     w->body,   w->status, w->footer, w->help};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) keypad(all[i], TRUE);
}

/* Every window of the current tab; draws only. */
static void draw(const struct app *a, const struct layout *l, const struct wins *w) {
    if (l->too_small) {
        view_too_small_draw(l->rows, l->cols, a);
        return;
    }
    view_header_draw(w->header, a);
    view_tabs_draw(w->tabs, a, l);
    tab_of(a)->draw(w, a);
    view_status_draw(w->status, a);
    view_footer_draw(w->footer, a);
    if (a->help && w->help) view_help_draw(w->help, l, a);
}

static void relayout(struct app *a, struct layout *l, struct wins *w);

/* One frame: the current tab's state follows the app (the importance pane takes in what its
 * thread finished), the status line takes the lines its text needs, then every window, then
 * one doupdate. */
static void frame(struct app *a, struct layout *l, struct wins *w) {
    if (!l->too_small && tab_of(a)->prepare) tab_of(a)->prepare(a);
    if (!l->too_small && layout_status_lines(a, l->cols) != l->status.h) relayout(a, l, w);
    draw(a, l, w);
    doupdate();
}

/* A list tab keeps its selection in view. */
static void keep_selection(struct app *a, const struct layout *l) {
    if (tab_of(a)->list) app_scroll_fit(a, l->list.h);
}

static void relayout(struct app *a, struct layout *l, struct wins *w) {
    *l = layout_compute(LINES, COLS, a);
    wins_make(w, l);
    a->page = l->list.h;
    a->help_w = l->help_box.w - 3; /* inside the box, a column kept free */
    a->help_h = l->help_box.h - 2;
    keep_selection(a, l); /* a new layout can hide the selection */
    erase();
    wnoutrefresh(stdscr);
}

/* Applies one key and redraws the whole screen (what the loop does per key press). */
static int frame_key(struct app *a, struct layout *l, struct wins *w, int ch) {
    int r = keys_handle(a, ch);
    keep_selection(a, l);
    if (r & R_RELAYOUT) relayout(a, l, w);
    frame(a, l, w);
    return r;
}

static const char *bench_key_name(int ch) {
    static char buf[8];
    if (ch == '\t') return "Tab";
    buf[0] = (char)ch;
    buf[1] = '\0';
    return buf;
}

/* Idle frames, as the loop runs them, until the importance pane's background work is in: the
 * slowest frame (the one taking it in) goes to *adopt_ms. */
static void bench_imp_wait(struct app *a, struct layout *l, struct wins *w, double *adopt_ms) {
    struct timespec nap = {0, 1000 * 1000};
    *adopt_ms = 0;
    while (imp_busy(a)) {
        if (!imp_ready(a)) {
            nanosleep(&nap, NULL);
            continue;
        }
        double f0 = dp_clock_ms();
        frame(a, l, w);
        *adopt_ms = fmax(*adopt_ms, dp_clock_ms() - f0);
    }
}

/* The importance tab's first open, as the loop runs it: the key's frame (open_ms), then idle
 * frames until the background layout is in: the frame that takes it in (and computes the
 * importances) costs adopt_ms, the graph shows ready_ms after the key. Back to the predict tab
 * after. */
static void bench_importance(struct app *a, struct layout *l, struct wins *w, double *open_ms,
                             double *adopt_ms, double *ready_ms) {
    double t0 = dp_clock_ms();
    frame_key(a, l, w, 'i');
    *open_ms = dp_clock_ms() - t0;
    bench_imp_wait(a, l, w, adopt_ms);
    *ready_ms = dp_clock_ms() - t0;
    frame_key(a, l, w, '1');
}

/* `r` on the importance tab (grad -> occlusion), as the loop runs it: the key's frame (key_ms),
 * the idle frame taking the result in (adopt_ms), the result shown ready_ms after the key; then
 * `r` back to grad (back_ms, computed in the key's frame) and the predict tab. */
struct bench_occl {
    double key_ms, adopt_ms, ready_ms, back_ms;
};

static void bench_occlusion(struct app *a, struct layout *l, struct wins *w,
                            struct bench_occl *b) {
    double ignored;
    frame_key(a, l, w, 'i');
    bench_imp_wait(a, l, w, &ignored);
    double t0 = dp_clock_ms();
    frame_key(a, l, w, 'r');
    b->key_ms = dp_clock_ms() - t0;
    bench_imp_wait(a, l, w, &b->adopt_ms);
    b->ready_ms = dp_clock_ms() - t0;
    t0 = dp_clock_ms();
    frame_key(a, l, w, 'r');
    b->back_ms = dp_clock_ms() - t0;
    bench_imp_wait(a, l, w, &ignored);
    frame_key(a, l, w, '1');
}

/* --bench-keys N [--bench-seq KEYS] [--rows R --cols C] [--json]: the importance tab's first
 * open (bench_importance), then N key actions (cycling through a fixed mix, or KEYS), each
 * followed by a full redraw, into a curses screen whose output goes to /dev/null; prints the
 * time per key (mean, median, p95, max) and the slowest key. */
static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int bench_keys(struct app *a, long n, int rows, int cols, bool json, const char *keys) {
    static const int seq_default[] = {'g', 'w', 'p', 'n', '+', 'g', 'W', 'P', '-', 'm', 'G', 'c',
                                      'g', 's', 'j', '\t', 'g', 'w', 'N', 'm', '1', 'g', 'j', 'k'};
    int seq_user[64];
    const int *seq = seq_default;
    long nseq = (long)(sizeof seq_default / sizeof seq_default[0]);
    if (keys && *keys) { /* --bench-seq: the keys to cycle through */
        nseq = 0;
        for (const char *k = keys; *k && nseq < 64; k++) seq_user[nseq++] = (unsigned char)*k;
        seq = seq_user;
    }
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    if (!out || !in) {
        fprintf(stderr, "driple: explore: /dev/null: cannot open\n");
        if (out) fclose(out);
        if (in) fclose(in);
        return 1;
    }
    const char *term = getenv("TERM");
    SCREEN *scr = newterm(term && *term ? term : "xterm-256color", out, in);
    if (!scr) scr = newterm("xterm", out, in);
    if (!scr) {
        fprintf(stderr, "driple: explore: --bench-keys: no usable terminal description\n");
        fclose(out);
        fclose(in);
        return 1;
    }
    g_curses_on = 1;
    resizeterm(rows, cols);
    view_init(a->color, !a->utf8);
    struct layout l;
    struct wins w = {0};
    relayout(a, &l, &w);
    frame(a, &l, &w);
    double imp_open, imp_adopt, imp_ready_ms;
    bench_importance(a, &l, &w, &imp_open, &imp_adopt, &imp_ready_ms);
    struct bench_occl occl;
    bench_occlusion(a, &l, &w, &occl);
    double *t = malloc((size_t)n * sizeof *t);
    if (!t) {
        endwin();
        g_curses_on = 0;
        delscreen(scr);
        fclose(out);
        fclose(in);
        return 1;
    }
    double worst = -1, fill_max = 0;
    int worst_key = 0;
    long fills = 0;
    for (long i = 0; i < n; i++) {
        double t0 = dp_clock_ms();
        frame_key(a, &l, &w, seq[i % nseq]);
        t[i] = dp_clock_ms() - t0;
        if (t[i] > worst) {
            worst = t[i];
            worst_key = seq[i % nseq];
        }
        /* the idle frames that fill in deferred simulations, as the loop runs them */
        while (app_pending(a)) {
            double f0 = dp_clock_ms();
            app_fill_pending(a, FILL_BUDGET_MS);
            frame(a, &l, &w);
            fill_max = fmax(fill_max, dp_clock_ms() - f0);
            fills++;
        }
    }
    wins_free(&w);
    endwin();
    g_curses_on = 0;
    delscreen(scr);
    fclose(out);
    fclose(in);
    double sum = 0;
    for (long i = 0; i < n; i++) sum += t[i];
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double p50 = t[n / 2], p95 = t[(long)(0.95 * (double)(n - 1))], mx = t[n - 1];
    long n_embed, n_sim;
    dp_session_counts(a->ss, &n_embed, &n_sim);
    if (json) {
        struct dp_jw *jw = dp_jw_new();
        dp_jw_str(jw, "bench", "explore-keys");
        dp_jw_int(jw, "keys", n);
        dp_jw_int(jw, "rows", rows);
        dp_jw_int(jw, "cols", cols);
        const struct { const char *key; double v; } ms[] = {
            {"mean_ms", sum / (double)n}, {"median_ms", p50}, {"p95_ms", p95}, {"max_ms", mx}};
        for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) dp_jw_fixed(jw, ms[k].key, ms[k].v, 3);
        dp_jw_str(jw, "slowest_key", bench_key_name(worst_key));
        dp_jw_int(jw, "fill_frames", fills);
        dp_jw_fixed(jw, "fill_max_ms", fill_max, 3);
        dp_jw_int(jw, "embed_calls", n_embed);
        dp_jw_int(jw, "sim_calls", n_sim);
        const struct { const char *key; double v; } imp[] = {
            {"importance_open_ms", imp_open},       {"importance_adopt_ms", imp_adopt},
            {"importance_ready_ms", imp_ready_ms},  {"importance_layout_ms", imp_layout_ms(a)},
            {"occlusion_key_ms", occl.key_ms},      {"occlusion_adopt_ms", occl.adopt_ms},
            {"occlusion_ready_ms", occl.ready_ms}, {"grad_key_ms", occl.back_ms}};
        for (size_t k = 0; k < sizeof imp / sizeof imp[0]; k++)
            dp_jw_fixed(jw, imp[k].key, imp[k].v, 3);
        struct dp_error err = {0};
        if (dp_jw_print(jw, stdout, "stdout", &err) != DP_OK)
            fprintf(stderr, "driple: %s\n", err.msg);
        dp_jw_free(jw);
    }
    else
        printf("explore --bench-keys: %ld key actions with full redraws at %dx%d: mean %.2f ms, "
               "median %.2f ms, p95 %.2f ms, max %.2f ms (key '%s'); %ld idle frames filling in "
               "simulations, max %.2f ms; GNN passes %ld, simulations %ld; importance tab's "
               "first open: key to frame %.2f ms (Graphviz layout in the background, %.1f ms; "
               "the frame taking it in %.2f ms; graph shown %.1f ms after the key); r to "
               "occlusion: key to frame %.2f ms (computed in the background; the frame taking "
               "it in %.2f ms; shown %.1f ms after the key); r back to grad: key to frame "
               "%.2f ms\n",
               n, cols, rows, sum / (double)n, p50, p95, mx, bench_key_name(worst_key), fills,
               fill_max, n_embed, n_sim, imp_open, imp_layout_ms(a), imp_adopt,
               imp_ready_ms, occl.key_ms, occl.adopt_ms, occl.ready_ms, occl.back_ms);
    free(t);
    return 0;
}

static int run_ui(struct app *a) {
    install_signals();
    g_tty_in = STDIN_FILENO;
    g_tty_out = STDOUT_FILENO;
    g_tty_saved_ok = tcgetattr(g_tty_in, &g_tty_saved) == 0;
    /* newterm, not initscr: an unknown TERM is ours to report (initscr prints and exits) */
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        const char *term = getenv("TERM");
        fprintf(stderr, "driple: explore: the terminal type '%s' (TERM) is unknown to this "
                        "system's terminfo; try TERM=xterm-256color\n",
                term && *term ? term : "(unset)");
        return 1;
    }
    set_term(scr);
    reset_prepare();
    g_curses_on = 1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED, NULL);
    view_init(a->color, !a->utf8);
    if (a->color) importance_view_init_colors();

    struct layout l;
    struct wins w = {0};
    relayout(a, &l, &w);
    int rc = 0, flags = R_REDRAW;
    bool prepared = false;
    for (;;) {
        if (flags & R_QUIT) break;
        if (flags & R_RELAYOUT) relayout(a, &l, &w);
        if (flags & (R_REDRAW | R_RELAYOUT)) {
            frame(a, &l, &w);
        }
        if (!prepared) { /* the importance tab's layout, while the user reads the first screen */
            imp_prepare(a);
            prepared = true;
        }
        flags = R_NONE;
        if (g_quit_sig) {
            rc = 128 + (int)g_quit_sig;
            break;
        }
        /* tick fast while a transfer runs (its progress bar), else idle */
        enum app_job_state js;
        double prog;
        char phase[64];
        app_job_snapshot(a, &js, &prog, phase, sizeof phase);
        bool pending = app_pending(a);
        /* the importance pane waits for its background layout: look again soon */
        bool tab_wait = tab_of(a)->busy && tab_of(a)->busy(a);
        timeout(pending ? 0 : tab_wait ? 10 : js == APP_JOB_RUNNING || a->job.started ? 100 : 1000);
        int ch = getch();
        if (ch == ERR) {
            if (tab_wait && tab_of(a)->ready(a)) flags |= R_REDRAW; /* the frame takes it in */
            if (pending && app_fill_pending(a, FILL_BUDGET_MS)) flags |= R_REDRAW;
            if (app_tick(a)) flags |= R_REDRAW;
            continue;
        }
        if (ch == KEY_RESIZE) {
            flags |= R_RELAYOUT;
            continue;
        }
        if (ch == KEY_MOUSE) {
            MEVENT ev;
            if (getmouse(&ev) == OK) flags |= keys_mouse(a, &l, ev.y, ev.x);
            keep_selection(a, &l);
            flags |= R_REDRAW;
            continue;
        }
        if (l.too_small && ch != 'q' && ch != KEY_F(10) && !app_prompt_one_key(a)) continue;
        flags |= keys_handle(a, ch);
        keep_selection(a, &l);
        if (app_tick(a)) flags |= R_REDRAW;
    }
    wins_free(&w);
    endwin();
    g_curses_on = 0;
    delscreen(scr);
    return rc;
}

int tui_explore(const struct tui_opts *o) {
    setlocale(LC_ALL, "");
    struct app *a = calloc(1, sizeof *a);
    if (!a) {
        fprintf(stderr, "driple: explore: out of memory\n");
        return 1;
    }
    struct dp_error err = {0};
    if (app_init(a, &o->app, &err) != DP_OK) {
        app_free(a);
        free(a);
        fprintf(stderr, "driple: %s\n", err.msg);
        return 1;
    }
    const char *nc = getenv("NO_COLOR");
    a->color = !o->no_color && !(nc && *nc);
    a->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
    a->defer_sims = true; /* a key answers with the prediction; simulations follow in idle frames */

    int rc;
    if (o->bench_keys > 0)
        rc = bench_keys(a, o->bench_keys, o->rows, o->cols, o->json, o->bench_seq);
    else if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "driple: explore: needs a terminal (stdin and stdout); for scripts see "
                        "'driple predict' and 'driple compare'\n");
        rc = 1;
    } else {
        rc = run_ui(a);
    }
    imp_free(a);
    app_free(a);
    free(a);
    return rc;
}
