/* layout.h: the explorer's screen geometry, computed from the terminal size and the app state
 * alone (no curses): header, tab bar, the panes of the current tab, status line, footer, the
 * help overlay, and the tab labels' positions for mouse clicks. Tested without a terminal. */
#ifndef DRIPLE_LAYOUT_H
#define DRIPLE_LAYOUT_H

#include <stdbool.h>

#include "app.h"

#define LAYOUT_MIN_ROWS 24
#define LAYOUT_MIN_COLS 80
#define LAYOUT_TOP_H    11 /* table and derived panes: 1 heading + 4 x 2 lines + 2 borders */
#define LAYOUT_STATUS_MAX 3 /* a long message wraps onto this many lines, over the body */
#define LAYOUT_HELP_MAX_W 110 /* the help overlay's widest (its lines wrap to it) */

struct rect {
    int y, x, h, w;
};

struct layout {
    int         rows, cols;
    bool        too_small;   /* below LAYOUT_MIN_*: draw only a message */
    struct rect header;      /* 2 rows: the graph, the setting and provenance */
    struct rect tabs;        /* 1 row */
    struct rect tab[APP_TAB_COUNT]; /* each tab label, for clicks */
    struct rect body;        /* between tabs and status */
    struct rect table;       /* predict tab: the 12 metrics */
    struct rect derived;     /* predict tab: derived figures */
    struct rect strips;      /* predict tab: one iteration per resource */
    struct rect list;        /* compare / groups: the rows inside the body (below 2 heading lines) */
    struct rect status;      /* 1 row, or up to LAYOUT_STATUS_MAX above the footer (over the
                                body's last rows) while a long message or prompt needs them */
    struct rect footer;      /* 1 row */
    struct rect help;        /* the help overlay (when a->help): every row between the tab bar
                                and the status line, blank around ... */
    struct rect help_box;    /* ... its box, centred, at most LAYOUT_HELP_MAX_W wide */
};

/* Computes every rectangle for a rows x cols terminal; pure. Every rectangle lies inside the
 * screen, none overlap except the help overlay and a status line of several lines (over the
 * body); below the minimum only too_small is meaningful. */
struct layout layout_compute(int rows, int cols, const struct app *a);
/* Lines the status line needs at cols columns for what it shows (app_status_text wrapped at
 * blanks), 1 .. LAYOUT_STATUS_MAX; 1 for a NULL app. */
int layout_status_lines(const struct app *a, int cols);

/* The tabs' panes inside l->body (their rows of the tab table): the predict tab's table,
 * derived figures and strips; a list tab's rows. */
void layout_predict(struct layout *l);
void layout_list(struct layout *l);

/* Width of tab i's label as drawn: " N Name ". */
int layout_tab_width(int i);

/* True when (y, x) lies in r. */
bool rect_contains(struct rect r, int y, int x);

#endif
