/* layout.c: pure screen geometry for the explorer (nvtop's compute_sizes_from_layout): header,
 * tabs, body panes, status and footer, the help overlay. Nothing here touches curses. */
#include "layout.h"

#include <string.h>

#include "tabs.h"
#include "text.h"

static struct rect mk(int y, int x, int h, int w) {
    struct rect r = {y, x, h < 0 ? 0 : h, w < 0 ? 0 : w};
    return r;
}

int layout_tab_width(int i) {
    return (int)strlen(tab_defs[i].name) + 4;
}

/* Predict: the metric table and the derived figures side by side, the strips below. */
void layout_predict(struct layout *l) {
    int tw = l->cols / 2 > 42 ? l->cols / 2 : 42;
    int top = LAYOUT_TOP_H;
    l->table = mk(l->body.y, 0, top, tw);
    l->derived = mk(l->body.y, tw, top, l->cols - tw);
    l->strips = mk(l->body.y + top, 0, l->body.h - top, l->cols);
}

/* Lists: a title and a column heading inside the body, then the rows. */
void layout_list(struct layout *l) { l->list = mk(l->body.y + 2, 0, l->body.h - 2, l->cols); }

int layout_status_lines(const struct app *a, int cols) {
    if (!a) return 1;
    char buf[512];
    app_status_text(a, buf, sizeof buf);
    int n = text_wrap(buf, cols, 2, NULL, 0);
    return n < 1 ? 1 : n > LAYOUT_STATUS_MAX ? LAYOUT_STATUS_MAX : n;
}

bool rect_contains(struct rect r, int y, int x) {
    return y >= r.y && y < r.y + r.h && x >= r.x && x < r.x + r.w;
}

struct layout layout_compute(int rows, int cols, const struct app *a) {
    struct layout l;
    memset(&l, 0, sizeof l);
    l.rows = rows;
    l.cols = cols;
    if (rows < LAYOUT_MIN_ROWS || cols < LAYOUT_MIN_COLS) {
        l.too_small = true;
        return l;
    }
    l.header = mk(0, 0, 2, cols);
    l.tabs = mk(2, 0, 1, cols);
    int x = 1;
    for (int i = 0; i < APP_TAB_COUNT; i++) {
        int w = layout_tab_width(i);
        l.tab[i] = mk(2, x, 1, w);
        x += w + 1;
    }
    int sl = layout_status_lines(a, cols);
    l.status = mk(rows - 1 - sl, 0, sl, cols);
    l.footer = mk(rows - 1, 0, 1, cols);
    l.body = mk(3, 0, rows - 5, cols);
    /* every tab's panes: the windows of every tab exist, the current tab draws into its own */
    for (int i = 0; i < APP_TAB_COUNT; i++)
        if (tab_defs[i].layout) tab_defs[i].layout(&l);

    if (a && a->help) { /* over the body, the status line and footer staying readable */
        int hw = cols - 4 < LAYOUT_HELP_MAX_W ? cols - 4 : LAYOUT_HELP_MAX_W;
        l.help = mk(3, 0, rows - 3 - l.status.h - 1, cols);
        l.help_box = mk(l.help.y, (cols - hw) / 2, l.help.h, hw);
    }
    return l;
}
