/* view_common.c: colours and attributes, boxes (UTF-8 or ASCII), number formatting and clipped
 * printing for the explorer's views. */
#include "view_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

static bool g_color, g_ascii;

bool view_ascii(void) { return g_ascii; }

const char *view_ellipsis(void) { return g_ascii ? "~" : "\xe2\x80\xa6"; }

void view_init(bool color, bool ascii) {
    g_ascii = ascii;
    g_color = color && has_colors();
    if (!g_color) return;
    start_color();
    use_default_colors();
    init_pair(1, COLOR_CYAN, -1);    /* titles */
    init_pair(2, COLOR_BLACK, COLOR_CYAN); /* selection */
    init_pair(3, COLOR_RED, -1);     /* warnings */
    init_pair(4, COLOR_GREEN, -1);   /* good / trained */
    init_pair(5, COLOR_MAGENTA, -1); /* simulated */
    init_pair(6, COLOR_GREEN, -1);   /* bursts */
    init_pair(7, COLOR_BLACK, COLOR_WHITE); /* active tab */
    init_pair(8, COLOR_YELLOW, -1);  /* focused box, keys */
}

attr_t view_attr(enum view_style s) {
    if (!g_color) {
        switch (s) {
        case ST_TITLE: case ST_HEAD: case ST_KEY: return A_BOLD;
        case ST_SEL: case ST_TAB_ON: return A_REVERSE;
        case ST_SEL_DIM: return A_UNDERLINE;
        case ST_WARN: return A_BOLD | A_UNDERLINE;
        case ST_FOCUS: return A_BOLD;
        case ST_DIM: case ST_SIM: return A_DIM;
        default: return A_NORMAL;
        }
    }
    switch (s) {
    case ST_TITLE: return COLOR_PAIR(1) | A_BOLD;
    case ST_HEAD: return A_BOLD;
    case ST_SEL: return COLOR_PAIR(2);
    case ST_SEL_DIM: return A_UNDERLINE;
    case ST_WARN: return COLOR_PAIR(3) | A_BOLD;
    case ST_GOOD: return COLOR_PAIR(4);
    case ST_SIM: return COLOR_PAIR(5);
    case ST_DIM: return A_DIM;
    case ST_BURST: return COLOR_PAIR(6);
    case ST_TAB: return A_NORMAL;
    case ST_TAB_ON: return COLOR_PAIR(7) | A_BOLD;
    case ST_FOCUS: return COLOR_PAIR(8) | A_BOLD;
    case ST_KEY: return COLOR_PAIR(8) | A_BOLD;
    default: return A_NORMAL;
    }
}

void view_box(WINDOW *w, const struct app *a, const char *title, bool focused) {
    attr_t at = focused ? view_attr(ST_FOCUS) : A_NORMAL;
    wattron(w, at);
    (void)a;
    if (!g_ascii) box(w, 0, 0);
    else wborder(w, '|', '|', '-', '-', '+', '+', '+', '+');
    wattroff(w, at);
    if (title) {
        int maxw = getmaxx(w) - 4;
        wattron(w, view_attr(ST_TITLE));
        mvwaddch(w, 0, 1, ' ');
        view_put(w, 0, 2, maxw, title);
        int len = (int)strlen(title);
        if (len < maxw) waddch(w, ' ');
        wattroff(w, view_attr(ST_TITLE));
    }
}

void view_num(char *buf, size_t n, double x, int width) {
    if (!isfinite(x)) {
        snprintf(buf, n, "%*s", width, "-");
        return;
    }
    double ax = fabs(x);
    if (ax >= 1e9) snprintf(buf, n, "%*.2fG", width - 1, x / 1e9);
    else if (ax >= 1e6) snprintf(buf, n, "%*.2fM", width - 1, x / 1e6);
    else if (ax >= 1e5) snprintf(buf, n, "%*.1fk", width - 1, x / 1e3);
    else if (ax >= 1000) snprintf(buf, n, "%*.0f", width, x);
    else if (ax >= 100) snprintf(buf, n, "%*.1f", width, x);
    else if (ax >= 1 || ax == 0) snprintf(buf, n, "%*.2f", width, x);
    else snprintf(buf, n, "%*.3f", width, x);
}

bool view_derived_clamped(const struct dp_prediction *p, enum dp_derived k) {
    int bit = k == DP_D_ITERATION_MS ? DP_SA_ITERATION : k == DP_D_MEMORY_GB ? DP_SA_MEMORY : -1;
    return bit >= 0 && (p->clamped >> bit & 1u);
}

void view_num_fit(char *buf, size_t n, double x, int maxw) {
    if (!isfinite(x)) {
        snprintf(buf, n, "-");
        return;
    }
    /* four significant digits at most (258.9, 24.54, 2811: more than the numbers know is
     * noise), fewer where the columns are few; a plain number first, then k, M or G where the
     * value reads in hundreds or less of that unit */
    static const double div[] = {1, 1e3, 1e6, 1e9};
    static const char suffix[] = " kMG";
    double ax = fabs(x);
    for (int s = 0; s < 4; s++) {
        if (s > 0 && (ax < div[s] || (s < 3 && ax >= div[s + 1]))) continue;
        double v = x / div[s], av = fabs(v);
        for (int dec = av < 100 ? 2 : av < 1000 ? 1 : 0; dec >= 0; dec--) {
            int len = s ? snprintf(buf, n, "%.*f%c", dec, v, suffix[s])
                        : snprintf(buf, n, "%.*f", dec, v);
            if (len <= maxw) return;
        }
    }
    snprintf(buf, n, "%.0e", x);
}

int view_put(WINDOW *w, int y, int x, int width, const char *s) {
    if (!w || width <= 0 || y < 0 || x < 0 || y >= getmaxy(w) || x >= getmaxx(w)) return 0;
    if (x + width > getmaxx(w)) width = getmaxx(w) - x;
    int cols = text_cols(s);
    if (cols <= width) {
        mvwaddstr(w, y, x, s);
        return cols;
    }
    /* cut: the last column says so */
    mvwaddnstr(w, y, x, s, (int)text_bytes(s, width - 1));
    waddstr(w, view_ellipsis());
    return width;
}

int view_wrap(WINDOW *w, int y, int x, int width, int max_lines, int indent, const char *s) {
    struct text_line l[16];
    if (max_lines > 16) max_lines = 16;
    if (max_lines < 1) return 0;
    int n = text_wrap(s, width, indent, l, 16);
    int shown = n < max_lines ? n : max_lines;
    for (int i = 0; i < shown; i++) {
        char line[512];
        int room = width - l[i].indent;
        snprintf(line, sizeof line, "%.*s", l[i].len, s + l[i].start);
        if (i == shown - 1 && n > shown) { /* the text goes on: say so at the end of the last */
            line[text_bytes(line, room > 2 ? room - 2 : 0)] = '\0';
            snprintf(line + strlen(line), sizeof line - strlen(line), " %s", view_ellipsis());
        }
        view_put(w, y + i, x + l[i].indent, room, line);
    }
    return shown;
}

void view_too_small_draw(int rows, int cols, const struct app *a) {
    char msg[256];
    werase(stdscr);
    /* the one-key prompts still answer here (y / n / Esc): say so, or the keys seem dead */
    const char *hint = a->prompt == APP_PROMPT_QUIT        ? "unsaved transfers: y saves and quits, n quits"
                       : a->prompt == APP_PROMPT_OVERWRITE ? "the file exists: y overwrites, n keeps it"
                                                           : "enlarge it, or q";
    snprintf(msg, sizeof msg, "driple needs at least %dx%d (now %dx%d); %s", LAYOUT_MIN_COLS,
             LAYOUT_MIN_ROWS, cols, rows, hint);
    int len = text_cols(msg), w = cols > len ? len : cols;
    view_wrap(stdscr, rows / 2 - 1 > 0 ? rows / 2 - 1 : 0, (cols - w) / 2, w, rows, 0, msg);
    wnoutrefresh(stdscr);
}
