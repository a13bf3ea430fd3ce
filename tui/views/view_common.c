/* view_common.c: colours and attributes, boxes (UTF-8 or ASCII), number formatting and clipped
 * printing for the explorer's views. */
#include "view_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool g_color;

void view_init_colors(bool color) {
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
    if (a->utf8) box(w, 0, 0);
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

void view_put(WINDOW *w, int y, int x, int width, const char *s) {
    if (width <= 0 || y < 0 || y >= getmaxy(w) || x >= getmaxx(w)) return;
    if (x + width > getmaxx(w)) width = getmaxx(w) - x;
    /* count columns: ASCII one each; a UTF-8 sequence one each (our glyphs are narrow) */
    int cols = 0;
    const char *p = s;
    while (*p && cols < width) {
        const char *q = p + 1;
        while ((*q & 0xC0) == 0x80) q++;
        p = q;
        cols++;
    }
    mvwaddnstr(w, y, x, s, (int)(p - s));
}

void view_too_small_draw(int rows, int cols, const struct app *a) {
    char msg[128];
    werase(stdscr);
    snprintf(msg, sizeof msg, "driple needs at least %dx%d (now %dx%d)", LAYOUT_MIN_COLS,
             LAYOUT_MIN_ROWS, cols, rows);
    int len = (int)strlen(msg);
    int y = rows / 2, x = cols > len ? (cols - len) / 2 : 0;
    mvaddnstr(y, x, msg, cols);
    /* the quit prompt still answers here (y / n / Esc): say so, or the keys seem dead */
    const char *hint = a->prompt == APP_PROMPT_QUIT
                           ? "unsaved transfers: y saves and quits, n quits"
                           : "enlarge it, or q";
    len = (int)strlen(hint);
    if (y + 1 < rows) mvaddnstr(y + 1, cols > len ? (cols - len) / 2 : 0, hint, cols);
    wnoutrefresh(stdscr);
}
