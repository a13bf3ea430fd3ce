/* view_help.c: the help overlay, generated from the key table plus the derived figures'
 * formulas, each entry wrapped to the overlay's width (continuation lines aligned where the
 * entry's text starts) and scrolled when the terminal is short. */
#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "text.h"
#include "view_common.h"

#define HELP_MAX 128  /* entries */
#define HELP_ROWS 600 /* lines once wrapped */

void view_help_draw(WINDOW *w, const struct layout *l, const struct app *a) {
    const char *lines[HELP_MAX];
    static char buf[HELP_MAX][KEYS_HELP_LINE];
    static char text[HELP_MAX][KEYS_HELP_LINE];
    static struct text_line rows[HELP_ROWS];
    static int row_entry[HELP_ROWS];
    int n = keys_help_lines(lines, buf, HELP_MAX);
    /* the box, blank around it (the screen under it would read as part of it) */
    werase(w);
    wnoutrefresh(w);
    WINDOW *b = derwin(w, l->help_box.h, l->help_box.w, l->help_box.y - l->help.y,
                       l->help_box.x - l->help.x);
    if (!b) return;
    int ih = getmaxy(b) - 2, iw = getmaxx(b) - 3, nr = 0; /* a column free before the border */
    /* every entry wrapped at iw: its tab says where continuation lines start */
    for (int e = 0; e < n && nr < HELP_ROWS; e++) {
        int indent = keys_help_line(lines[e], text[e], sizeof text[e]);
        int k = text[e][0] ? text_wrap(text[e], iw, indent, rows + nr, HELP_ROWS - nr) : 0;
        if (k == 0) rows[nr] = (struct text_line){0, 0, 0};
        if (k == 0) k = 1; /* a blank line stays */
        for (int j = 0; j < k && nr < HELP_ROWS; j++) row_entry[nr++] = e;
    }
    int first = a->help_scroll;
    if (first > nr - ih) first = nr - ih;
    if (first < 0) first = 0;
    char title[96];
    if (nr > ih)
        snprintf(title, sizeof title, "Help (Esc or ? closes; j/k, PgUp/PgDn: lines %d-%d of %d)",
                 first + 1, first + ih < nr ? first + ih : nr, nr);
    else
        snprintf(title, sizeof title, "Help (Esc or ? closes)");
    view_box(b, a, title, true);
    for (int i = 0; i < ih && first + i < nr; i++) {
        const struct text_line *r = &rows[first + i];
        char line[KEYS_HELP_LINE];
        snprintf(line, sizeof line, "%.*s", r->len, text[row_entry[first + i]] + r->start);
        view_put(b, 1 + i, 1 + r->indent, iw - r->indent, line);
    }
    wnoutrefresh(b);
    delwin(b);
}
